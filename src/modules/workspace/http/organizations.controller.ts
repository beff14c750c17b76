import { Body, Controller, Get, Param, Post, Put, Query, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { Actor } from '../../../shared/domain/actor.js';
import { CurrentActor } from '../../../shared/http/actor.decorator.js';
import { ApiCreatedWithLocation, created } from '../../../shared/http/created-location.js';
import { deleted, DeletionRoute } from '../../../shared/http/deletion.js';
import { Conflicts } from '../../../shared/http/error-responses.js';
import { pageRequest, setPageHeaders } from '../../../shared/http/pagination.js';
import { ParseIdPipe } from '../../../shared/http/parse-id.pipe.js';
import { OrganizationsService } from '../application/organizations.service.js';
import { ProjectsService } from '../application/projects.service.js';
import { NoQueryDto, PageQueryDto } from '../../../shared/http/list-query.dto.js';
import { AddMemberDto, ChangeRoleDto, CreateOrganizationDto } from './dto/workspace.dto.js';
import { MemberDto, OrganizationDto, ProjectDto } from './dto/workspace-responses.dto.js';
import { WorkspaceRoutes } from '../../../shared/http/scopes.decorator.js';

const LAST_ADMIN = { 'WORKSPACE.LAST_ADMIN': 'a team keeps at least one admin' };

@ApiTags('workspace')
@WorkspaceRoutes()
@Controller('organizations')
export class OrganizationsController {
  constructor(
    private readonly organizations: OrganizationsService,
    private readonly projects: ProjectsService,
  ) {}

  @Get()
  @ApiOperation({ operationId: 'OrganizationsController_list', summary: "List the caller's teams" })
  @ApiOkResponse({ type: [OrganizationDto], description: "the caller's teams, with the caller's role in each" })
  async list(@CurrentActor() actor: Actor, @Query() query: PageQueryDto, @Res({ passthrough: true }) res: Response) {
    const page = pageRequest(query);
    const result = await this.organizations.list(actor, page);
    setPageHeaders(res, page, result.total);
    return result.items;
  }

  @Post()
  @ApiOperation({ operationId: 'OrganizationsController_create', summary: 'Create a team' })
  @ApiCreatedWithLocation({ type: OrganizationDto, description: 'the new team; the caller is its admin' })
  async create(@CurrentActor() actor: Actor, @Body() dto: CreateOrganizationDto, @Res({ passthrough: true }) res: Response) {
    return created(res, '/organizations/', await this.organizations.create(actor, dto.name));
  }

  @Get(':id')
  @ApiOperation({ operationId: 'OrganizationsController_get', summary: 'Get a team' })
  @ApiOkResponse({ type: OrganizationDto, description: "the team, with the caller's role" })
  get(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number) {
    return this.organizations.get(id, actor);
  }

  @Get(':id/members')
  @ApiOperation({ operationId: 'OrganizationsController_members', summary: "List a team's members" })
  @ApiOkResponse({ type: [MemberDto], description: "the team's members" })
  members(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Query() _query: NoQueryDto) {
    return this.organizations.members(id, actor);
  }

  @Post(':id/members')
  @ApiOperation({ operationId: 'OrganizationsController_addMember', summary: 'Add a member to a team' })
  @ApiCreatedResponse({ type: MemberDto, description: 'the new member entry' })
  @Conflicts({ 'WORKSPACE.ALREADY_MEMBER': 'the user is already a member of the team' })
  addMember(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Body() dto: AddMemberDto) {
    return this.organizations.addMember(id, actor, dto.user, dto.role);
  }

  /** The member entry with its new role; demoting the last admin is a 409. */
  @Put(':id/members/:userId')
  @ApiOperation({ operationId: 'OrganizationsController_changeRole', summary: "Change a member's role in a team" })
  @ApiOkResponse({ type: MemberDto, description: 'the member entry with its new role' })
  @Conflicts(LAST_ADMIN)
  changeRole(
    @CurrentActor() actor: Actor,
    @Param('id', ParseIdPipe) id: number,
    @Param('userId', ParseIdPipe) userId: number,
    @Body() dto: ChangeRoleDto,
  ) {
    return this.organizations.changeRole(id, actor, userId, dto.role);
  }

  /** The answer's id is the user's: the membership has no id of its own. */
  @DeletionRoute(':id/members/:userId', 'the user is no longer a member of the team')
  @ApiOperation({ operationId: 'OrganizationsController_removeMember', summary: 'Remove a member from a team' })
  @Conflicts(LAST_ADMIN)
  async removeMember(
    @CurrentActor() actor: Actor,
    @Param('id', ParseIdPipe) id: number,
    @Param('userId', ParseIdPipe) userId: number,
  ) {
    await this.organizations.removeMember(id, actor, userId);
    return deleted(userId);
  }

  @Get(':id/projects')
  @ApiOperation({ operationId: 'OrganizationsController_listProjects', summary: "List a team's projects" })
  @ApiOkResponse({ type: [ProjectDto], description: "the team's projects" })
  async listProjects(
    @CurrentActor() actor: Actor,
    @Param('id', ParseIdPipe) id: number,
    @Query() query: PageQueryDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    const page = pageRequest(query);
    const result = await this.projects.list(id, actor, page);
    setPageHeaders(res, page, result.total);
    return result.items;
  }
}
