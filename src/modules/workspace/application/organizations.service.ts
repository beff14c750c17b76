import { Injectable } from '@nestjs/common';
import { IdentityApi } from '../../identity/index.js';
import type { Actor } from '../../../shared/domain/actor.js';
import { InvalidInputError } from '../../../shared/domain/domain-error.js';
import type { Page, PageRequest } from '../../../shared/http/pagination.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import type { Role } from '../contracts/workspace.api.js';
import { Membership, ROLES } from '../domain/membership.entity.js';
import { Organization } from '../domain/organization.entity.js';
import { AlreadyMemberError, LastAdminError, MemberNotFoundError } from '../domain/workspace.errors.js';
import { WorkspaceRepository } from '../infrastructure/workspace.repository.js';
import { WorkspaceAccess } from './workspace-access.service.js';
import { toOrganizationView, type MemberView, type OrganizationView } from './workspace.views.js';

@Injectable()
export class OrganizationsService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly repo: WorkspaceRepository,
    private readonly access: WorkspaceAccess,
    private readonly identity: IdentityApi,
  ) {}

  async list(actor: Actor, page: PageRequest): Promise<Page<OrganizationView>> {
    const { items, total } = await this.repo.organizationsOf(actor.userId, page);
    return { items: items.map((i) => toOrganizationView(i.organization, i.role)), total };
  }

  /** The creator becomes the team's first admin. */
  create(actor: Actor, name: string): Promise<OrganizationView> {
    return this.uow.run(async () => {
      const org = new Organization();
      org.name = name;
      org.createdBy = actor.userId;
      const saved = await this.repo.saveOrganization(org);
      await this.repo.insertMembership(Object.assign(new Membership(), { organizationId: saved.id, userId: actor.userId, role: 'admin' }));
      return toOrganizationView(saved, 'admin');
    });
  }

  async get(organizationId: number, actor: Actor): Promise<OrganizationView> {
    const { role } = await this.access.organization(organizationId, actor, 'read');
    const org = (await this.repo.findOrganization(organizationId))!;
    return toOrganizationView(org, role);
  }

  async members(organizationId: number, actor: Actor): Promise<MemberView[]> {
    await this.access.organization(organizationId, actor, 'read');
    const memberships = await this.repo.members(organizationId);
    const users = new Map((await this.identity.findUsers(memberships.map((m) => Number(m.userId)))).map((u) => [u.id, u]));
    return memberships.map((m) => ({
      user_id: Number(m.userId),
      username: users.get(Number(m.userId))?.username ?? '',
      role: m.role,
    }));
  }

  /** `user` is an id or `@username`; an unknown user is a 400 naming `user`. */
  addMember(organizationId: number, actor: Actor, user: string | number, role: Role = 'member'): Promise<MemberView> {
    if (!ROLES.includes(role)) {
      throw new InvalidInputError(`role must be one of ${ROLES.join(', ')}`, [{ field: 'role', message: 'unknown role' }]);
    }
    return this.uow.run(async () => {
      await this.access.organization(organizationId, actor, 'admin');
      const found = await this.identity.resolveUser(user);
      if (!found) throw new InvalidInputError('user: no such user', [{ field: 'user', message: 'no such user' }]);
      if (await this.repo.membership(organizationId, found.id)) throw new AlreadyMemberError();
      await this.repo.insertMembership(Object.assign(new Membership(), { organizationId, userId: found.id, role }));
      return { user_id: found.id, username: found.username, role };
    });
  }

  /**
   * Admins change a member's role (theirs too); the last admin cannot be
   * demoted. The admin rows are locked as a removal locks them, so a
   * demotion and a removal of the other admin cannot both go through.
   */
  changeRole(organizationId: number, actor: Actor, userId: number, role: Role): Promise<MemberView> {
    return this.uow.run(async () => {
      await this.access.organization(organizationId, actor, 'admin');
      const target = await this.repo.membership(organizationId, userId);
      if (!target) throw new MemberNotFoundError();
      if (target.role === 'admin' && role !== 'admin') await this.requireAnotherAdmin(organizationId, userId);
      if (!(await this.repo.updateRole(organizationId, userId, role))) throw new MemberNotFoundError();
      const [user] = await this.identity.findUsers([userId]);
      return { user_id: userId, username: user?.username ?? '', role };
    });
  }

  /** Admins remove anyone; any member may leave. The last admin stays. */
  removeMember(organizationId: number, actor: Actor, userId: number): Promise<void> {
    return this.uow.run(async () => {
      await this.access.organization(organizationId, actor, userId === actor.userId ? 'read' : 'admin');
      const target = await this.repo.membership(organizationId, userId);
      if (!target) throw new MemberNotFoundError();
      if (target.role === 'admin') await this.requireAnotherAdmin(organizationId, userId);
      // Removed since it was read, by a request that committed first: one 200, the others 404.
      if (!(await this.repo.deleteMembership(organizationId, userId))) throw new MemberNotFoundError();
    });
  }

  /** 409 unless the team has an admin besides `userId`; holds the admin rows until the transaction ends. */
  private async requireAnotherAdmin(organizationId: number, userId: number): Promise<void> {
    const admins = await this.repo.adminsForUpdate(organizationId);
    if (!admins.some((a) => Number(a.userId) !== userId)) throw new LastAdminError();
  }
}
